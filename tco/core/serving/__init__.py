"""Serving physics: model arithmetic, rooflines, replica shapes, cycle times, queueing, pool sizing,
device power.

A pool is sized by :func:`tco.core.serving.search.size_pool` from what it serves (:mod:`tco.core.serving.shapes`): a
replica's cycles (:mod:`tco.core.serving.cycles`, on :mod:`tco.core.serving.steps`), one candidate shape at its slot cap
(:mod:`tco.core.serving.candidates`), the split of its queues' slack (:mod:`tco.core.serving.split`), lower bounds of a
candidate's cost (:mod:`tco.core.serving.floors`), the chosen shape's terms per draw (:mod:`tco.core.serving.selection`)
and its figures at a load (:mod:`tco.core.serving.capacity`)."""
