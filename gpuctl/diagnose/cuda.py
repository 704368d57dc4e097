"""The oldest Linux driver each CUDA release runs on (NVIDIA's CUDA toolkit release notes, table 3)."""

from __future__ import annotations

_MIN_DRIVER = {
    "10.0": "410.48", "10.1": "418.39", "10.2": "440.33", "11.0": "450.36.06", "11.1": "455.23",
    "11.2": "460.27.03", "11.3": "465.19.01", "11.4": "470.42.01", "11.5": "495.29.05",
    "11.6": "510.39.01", "11.7": "515.43.04", "11.8": "520.61.05", "12.0": "525.60.13",
    "12.1": "530.30.02", "12.2": "535.54.03", "12.3": "545.23.06", "12.4": "550.54.14",
    "12.5": "555.42.02", "12.6": "560.28.03", "12.8": "570.26", "12.9": "575.51.03",
    "13.0": "580.65.06",
}  # fmt: skip


def min_driver_for(cuda: str) -> str:
    """'12.4' → '550.54.14'; a release not in the table gets a pointer to NVIDIA's table."""
    return _MIN_DRIVER.get(cuda, f"the one NVIDIA's release notes list for CUDA {cuda}")
