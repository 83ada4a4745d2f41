"""The one evaluation entry point and the decisions made on it: compare, break-even, the verdict, flip
conditions, program views, training runs, validation and calibration."""
