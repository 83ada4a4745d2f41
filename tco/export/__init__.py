"""Spreadsheet export: a finance workbook of live formulas, and reading its Inputs back."""

from tco.export.workbook import build_workbook, write_workbook

__all__ = ["build_workbook", "write_workbook"]
