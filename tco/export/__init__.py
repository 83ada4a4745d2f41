"""Spreadsheet export: a finance workbook of live formulas, and reading its Inputs back."""

from tco.export.workbook import build_workbook, formula_gaps, write_workbook

__all__ = ["build_workbook", "formula_gaps", "write_workbook"]
