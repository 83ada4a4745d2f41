"""The chosen candidate's terms, draw by draw: each term of the candidate chosen in a draw, picked among the
candidates' values without a loop over draws (bitwise selects, or writes at the few draws a candidate is chosen in).

:func:`tco.core.serving.search.size_pool` chooses a candidate shape per draw (an index); :class:`Picks` reads any term of
the chosen one, :func:`pick_terms` every field of :class:`tco.core.serving.candidates.ReplicaTerms` field by field, and
:func:`select_lines`, :func:`select_interference` and :func:`select_cycle_model` the chosen shape's cycle lines,
interference lines and cycle model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields, replace

import numpy as np

from tco.core.draws import as_floats, mask_bits, select_bits
from tco.core.serving import parallelism
from tco.core.serving.candidates import Candidate, ReplicaTerms
from tco.core.serving.cycles import interference_lines
from tco.core.serving.shapes import DeviceShape, ModelShape, PoolTerms
from tco.core.serving.steps import ConcaveLines, CycleModel, Lines, times


class Picks:
    """The chosen candidate's value of any term, per draw: the value of the candidate chosen most often,
    replaced where another one was chosen (one bitwise select per other candidate chosen in many draws,
    :func:`tco.core.draws.select_bits`: a masked copy is 4x slower on mixed masks; a candidate chosen in few
    draws, or evaluated at some draws only (``where``), is written at the draws where it is chosen), or a table
    lookup for terms that are one number per candidate.

    ``candidates`` are the pool's (None for a shape not evaluated, which is never chosen), ``index`` the chosen
    candidate per draw [-]. Calling it with a field name gives that field of the chosen candidate per draw.
    """

    def __init__(self, candidates: Sequence[Candidate | None], index):
        filler = next(c for c in candidates if c is not None)  # stands in for a skipped shape, which is never chosen
        self.candidates = candidates = [filler if c is None else c for c in candidates]
        self.index = np.asarray(index).astype(np.intp)
        self.scalar = self.index.ndim == 0
        #: every candidate evaluated at every draw (none at a subset of them): a field may then be gathered at any shape
        self.everywhere = all(c.where is None for c in candidates)
        #: the candidate chosen at every draw, when one is (its terms are then read as they are)
        self.single = 0 if len(candidates) == 1 else int(self.index) if self.scalar else None
        if len(candidates) > 1 and not self.scalar:
            counts = np.bincount(self.index.ravel(), minlength=len(candidates))
            chosen = np.flatnonzero(counts)
            # the candidate evaluated at every draw that is chosen most often; None where every candidate chosen was
            # evaluated at some draws only (each draw is then written from the one chosen there)
            whole = [k for k in chosen if candidates[k].where is None]
            self.base = max(whole, key=lambda k: counts[k]) if whole else None
            self.others = []   # (k, where it is chosen as int64 all-one bits or zeros) for a bitwise select
            self.written = []  # (k, the draws where it is chosen, which of its own values those are or None: all draws)
            for k in chosen:
                if candidates[k].where is not None:
                    where = candidates[k].where
                    mine = self.index[where] == k
                    self.written.append((k, tuple(w[mine] for w in where), mine))
                elif k != self.base and counts[k] * FEW_CHOSEN_SHARE_INVERSE < self.index.size:
                    self.written.append((k, np.nonzero(self.index == k), None))
                elif k != self.base:
                    self.others.append((k, mask_bits(self.index == k)))
            if not self.others and not self.written:
                self.single = self.base

    def __call__(self, name: str):
        """The chosen candidate's field ``name`` per draw."""
        if self.scalar:  # one draw: the chosen candidate's value
            return as_floats(getattr(self.candidates[self.single], name))
        return self.stacked([getattr(c, name) for c in self.candidates])

    def stacked(self, values: list):
        """The chosen candidate's value per draw among one value per candidate.

        Parameters
        ----------
        values : list [unit of the values]
            One number or array over draws per candidate (a candidate evaluated at some draws: its 1-D values there).

        Returns
        -------
        float or ndarray [unit of the values]
            The chosen candidate's value at each draw (a new array, or a candidate's own when one is chosen everywhere).
        """
        if len(values) == 1:
            return values[0]
        if self.scalar:
            return as_floats(values[int(self.index)])
        if all(np.ndim(v) == 0 for v in values):
            return np.take(np.asarray(values, float), self.index)
        shape = self.index.shape
        if self.everywhere:
            wider = np.broadcast_shapes(shape, *(np.shape(v) for v in values))
            if wider != shape:  # a field varies over draws its candidates' costs do not (a map's other axis)
                index = np.broadcast_to(self.index, wider)
                return np.take_along_axis(np.stack([np.broadcast_to(np.asarray(v, float), wider) for v in values]),
                                          index[None], 0)[0]
        base = np.full(shape, np.nan) if self.base is None else values[self.base]
        if not self.others and not self.written and np.shape(base) == shape:
            return np.asarray(base, float)
        out = base
        for k, bits in self.others:
            out = select_bits(bits, values[k], out, shape)
        if not self.written:
            return np.asarray(np.broadcast_to(out, shape), float)
        # a fresh array to write into: the last select's, or a copy (never a candidate's own array)
        out = out if self.others and out.shape == shape else np.array(np.broadcast_to(out, shape), float)
        for k, where, mine in self.written:
            value = values[k]
            if np.ndim(value) == 0:
                out[where] = value
            else:
                out[where] = value[mine] if mine is not None else np.broadcast_to(value, shape)[where]
        return out


#: a candidate chosen in fewer than 1/16 of the draws is written at those draws (a gather and a scatter of few
#: values) instead of selected bitwise over every draw (three passes)
FEW_CHOSEN_SHARE_INVERSE = 16

#: the fields of :class:`tco.core.serving.candidates.ReplicaTerms`, which :func:`pick_terms` picks
_TERMS = tuple(f.name for f in fields(ReplicaTerms))
#: shape fields every candidate of most pools shares (no wide shape among them: 1): kept as the one number then, not
#: gathered into an array over the draws
_SHARED_SHAPE_TERMS = ("data_parallel", "micro_batches")


def pick_terms(picks: Picks) -> dict:
    """Every field of :class:`tco.core.serving.candidates.ReplicaTerms` of the chosen candidate, per draw, picked field
    by field (:class:`Picks`).

    Parameters
    ----------
    picks : Picks
        The candidates and the chosen one per draw.

    Returns
    -------
    dict
        Field name -> the chosen candidate's value per draw (units of the fields).
    """
    out = {}
    for name in _TERMS:
        values = [getattr(c, name) for c in picks.candidates] if name in _SHARED_SHAPE_TERMS else ()
        shared = values and all(type(v) is float and v == values[0] for v in values)
        out[name] = values[0] if shared else picks(name)
    return out


def select_lines(picks: Picks, candidates: Sequence[Candidate]) -> list[Lines]:
    """The chosen candidate's seen lines per draw (every candidate of a pool has the same line structure).

    Parameters
    ----------
    picks : Picks
        The chosen candidate per draw.
    candidates : Sequence of Candidate
        The pool's candidates (``picks.candidates``).

    Returns
    -------
    list of Lines
        Intercepts [s] and slopes [s/sequence] per branch.
    """
    out = []
    for b, first in enumerate(candidates[0].seen_lines):
        out.append(Lines(tuple(picks.stacked([c.seen_lines[b].intercepts[i] for c in candidates])
                               for i in range(len(first.intercepts))),
                         tuple(picks.stacked([c.seen_lines[b].slopes[i] for c in candidates])
                               for i in range(len(first.slopes))), first.rising))
    return out


def select_interference(picks: Picks, single: Candidate | None, terms: PoolTerms, chi) -> ConcaveLines:
    """The chosen candidate's interference lines per draw: the even share ``(P/O) chi B`` from the chosen ``chi``, or
    each line of a micro-batch pipeline's bound picked (:func:`tco.core.serving.cycles.interference_lines`).

    Parameters
    ----------
    picks : Picks
        The chosen candidate per draw.
    single : Candidate or None
        The candidate chosen at every draw, when one is.
    terms : PoolTerms
        ``P / O`` [-] and whether the pool's interference takes two lines.
    chi : float or ndarray [s/token]
        The chosen candidate's replica time per prefill token.

    Returns
    -------
    ConcaveLines
        Intercepts [s] and slopes [s/sequence] of the interference.
    """
    if single is not None:
        return single.interference
    if not terms.two_interference_lines:
        return interference_lines(chi, terms.ratio, 1, 0.0, False)
    first = picks.candidates[0].interference
    return ConcaveLines(*(tuple(picks.stacked([getattr(c.interference, part)[i] for c in picks.candidates])
                                for i in range(len(first.slopes))) for part in ("intercepts", "slopes")), first.rising)


def select_cycle_model(picks: Picks, candidates: Sequence[Candidate], model: ModelShape, device: DeviceShape,
                       terms: PoolTerms) -> CycleModel:
    """The chosen shape's cycle model per draw: devices, stages and tensor ranks looked up, the terms that
    scale with them recomputed, the collectives gathered.

    Parameters
    ----------
    picks : Picks
        Which candidate each draw chose: its shape's devices, stages and tensor ranks are looked up by it.
    candidates : Sequence of Candidate
        The pool's candidates, whose cycle models are gathered (``picks.candidates``).
    model : ModelShape
        KV bytes per token [B/token] and KV heads [-].
    device : DeviceShape
        FLOP/s per device [FLOP/s].
    terms : PoolTerms
        Tiers per device [B, B/s], context [tokens] and the prefill KV factor [-].

    Returns
    -------
    CycleModel
        The chosen replica's cycle time [s] as a function of its decode and prefill tokens, per draw.
    """
    cms = [c.cycle_model for c in candidates]
    n = picks("devices_per_replica")
    k = model.kv_bytes_per_token * parallelism.kv_replication(picks("tensor_parallel"), model.kv_heads)
    template = next(c.cycle_model for c in candidates if c.where is None)  # its shape-independent terms at every draw
    shaped = {}  # the terms a wide or expert-parallel shape has of its own (tco.core.serving.expert.replica_model)
    for name in ("weight_bytes", "read_fixed_bytes", "weight_flops_per_token", "micro_batches", "data_parallel",
                 "expert_fixed_s", "expert_per_token_s"):
        values = [getattr(cm, name) for cm in cms]
        if any(v is not values[0] for v in values[1:]):
            shaped[name] = picks.stacked([as_floats(v) if name in ("micro_batches", "data_parallel") else v
                                          for v in values])
    if any(cm.expert_keep is not None for cm in cms):  # two-batch overlap in some candidate: each one's own share
        # kept (1 where a candidate has none: its expert terms are then 0, carried in its sync terms)
        shaped["expert_fixed_s"] = picks.stacked([cm.expert_fixed_s for cm in cms])
        shaped["expert_per_token_s"] = picks.stacked([cm.expert_per_token_s for cm in cms])
        shaped["expert_keep"] = picks.stacked([1.0 if cm.expert_keep is None else cm.expert_keep for cm in cms])
    return replace(template, **shaped, pipeline=picks("pipeline_stages"), flops_per_s=n * device.flops_per_s,
                   tier_capacity_bytes=tuple(c * n for c in terms.device_capacity_bytes),
                   tier_bandwidth_bytes_per_s=tuple(b * n for b in terms.device_bandwidth_bytes_per_s),
                   decode_kv_bytes_per_token=times(template.weight_reads, terms.context_tokens * k),
                   prefill_kv_bytes_per_token=terms.prefill_kv_factor * k,
                   sync_fixed_s=picks.stacked([cm.sync_fixed_s for cm in cms]),
                   sync_per_token_s=picks.stacked([cm.sync_per_token_s for cm in cms]),
                   sync_per_prompt_token_s=None if template.sync_per_prompt_token_s is None
                   else picks.stacked([cm.sync_per_prompt_token_s for cm in cms]))
