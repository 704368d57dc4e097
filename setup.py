"""Maps the top-level playbooks/ and templates/ folders into the package (see pyproject.toml)."""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["gpuctl", "gpuctl.*"]), "gpuctl.templates", "gpuctl.playbooks"],
    package_dir={"gpuctl.templates": "templates", "gpuctl.playbooks": "playbooks"},
)
