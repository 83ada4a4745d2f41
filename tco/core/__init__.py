"""The vectorized core of ``tco``.

Pure numpy: every function takes floats or numpy arrays that broadcast together and
returns arrays. No pydantic, pandas, Dash or openpyxl here; validated inputs arrive
as a mapping of dotted parameter names to values (see :mod:`tco.core.evaluate`).
"""
