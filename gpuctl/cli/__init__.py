"""Thin Typer commands: parse options, call gpuctl.core, render the result. Nothing else."""
