"""Serving physics: model arithmetic, rooflines, replica shapes, cycle times, queueing, pool sizing,
device power."""
