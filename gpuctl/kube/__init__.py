"""The Kubernetes client boundary. Importing this package is cheap; `kubernetes` loads on use."""
