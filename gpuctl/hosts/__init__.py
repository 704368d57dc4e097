"""The host boundary: inventory model, paramiko preflight probes, the ansible-runner driver."""
