"""Validation against published measurements (docs/validation.md) and calibration (docs/calibration.md)."""
