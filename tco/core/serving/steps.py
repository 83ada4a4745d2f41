"""Time of one serving cycle of a replica: per-phase roofline with overlap, plus collectives.

A *cycle* is one forward pass of every micro-batch in flight (``p`` micro-batches over
``p`` pipeline stages; ``p = 1`` is one engine step): each decode sequence gains one token
and the scheduled prefill chunks advance. A cycle with ``B`` decode tokens and ``N_p``
prefill tokens (``N = B + N_p``) runs two phases, each a roofline (Williams, Waterman and
Patterson, CACM 2009) of its bytes and FLOPs:

* **weight phase** -- the matrix multiplies: weight bytes ``p x W_read(N/p)`` (each stage
  reads its weights once per micro-batch) against ``2 A N`` FLOPs;
* **attention phase** -- the KV cache: ``B C k + N_p k_p`` bytes (times the KV replication
  of the tensor group) against ``4 L d C`` FLOPs per decode token and ``2 L d P`` per
  prefill token (causal mean context ``P/2``);

Within a phase, memory traffic and arithmetic overlap by ``o_mc``; the two phases overlap
by ``o_p`` (both in [0, 1]): ``x (+) y = max(x, y) + (1 - o) min(x, y)``, so ``o = 1`` is a
perfect overlap (the plain roofline maximum) and ``o = 0`` runs them back to back. The
collectives add ``s0 + s1 N`` (:mod:`tco.core.serving.parallelism`), the bandwidth part reduced
by the compute/communication overlap ``o_c``.

Because every term is linear in the tokens, or the maximum of linear pieces (memory
tiers placed fastest first, the roofline), the decode cycle ``t_d(B)`` is a convex
piecewise-linear function of the batch: the maximum of a fixed set of **lines**
(:class:`Lines`). The batch that meets a time target and the occupancy at a given load
then have closed forms (:func:`largest_within`, :func:`least_fixed_point`). A
mixture-of-experts model reads ``min(touched experts, all experts)``, so its cycle is the
*minimum* of two such functions (a sparse and a dense branch).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from tco.core.draws import maximum, minimum
from tco.core.serving.roofline import memory_read_time_s

#: the types of a number that may be a structural zero: a literal 0 (a term that is absent), not an array of zeros
#: (``type(x) in`` this tuple: half the cost of ``isinstance`` with a function call around it, one evaluation asks
#: ~800 times; numpy's float64 is a float, as ``isinstance`` saw it)
_NUMBER_TYPES = (float, int, np.float64, bool)


def _add(a, b):
    """``a + b``, skipping a structural zero (saves an array pass)."""
    if type(b) in _NUMBER_TYPES and b == 0:
        return a
    if type(a) in _NUMBER_TYPES and a == 0:
        return b
    return a + b


def times(count, x):
    """``count x`` for a count of stages or devices, skipping the multiplication by the number 1 (an array pass that
    changes no value: most replicas have one stage).

    Parameters
    ----------
    count : int or float or ndarray [-]
        Pipeline stages or devices.
    x : float or ndarray [unit of x]
        The per-stage or per-device quantity.

    Returns
    -------
    float or ndarray [unit of x]
        ``count x``.
    """
    if type(count) in _NUMBER_TYPES and count == 1:
        return x
    return count * x


def _scale(k, x):
    """``k x``, skipping a structural zero."""
    if (type(x) in _NUMBER_TYPES and x == 0) or (type(k) in _NUMBER_TYPES and k == 0):
        return 0.0
    return k * x


def overlapped(x, y, overlap, keep=None):
    """``max(x, y) + (1 - o) min(x, y)``: two durations overlapped by a share ``o``.

    Parameters
    ----------
    x, y : float or ndarray [s]
        The two durations.
    overlap : float or ndarray [-]
        Share of the shorter one hidden under the longer, 0-1.
    keep : float or ndarray or None [-]
        ``1 - overlap`` when the caller has it.

    Returns
    -------
    ndarray [s]
        The overlapped duration.
    """
    return maximum(x, y) + (1.0 - overlap if keep is None else keep) * minimum(x, y)


def overlap_keeps(memory_compute_overlap, phase_overlap, comm_overlap) -> tuple:
    """``(1 - o_mc, 1 - o_p, 1 - o_c)``: the share of the shorter duration left exposed by each overlap.

    Parameters
    ----------
    memory_compute_overlap, phase_overlap, comm_overlap : float or ndarray [-]
        The overlaps of memory traffic and arithmetic, of the weight and attention phases, and of the
        collectives under computation, 0-1.

    Returns
    -------
    tuple of float or ndarray [-]
        ``1 - o`` of each, in that order.
    """
    return 1.0 - memory_compute_overlap, 1.0 - phase_overlap, 1.0 - comm_overlap


@dataclass(frozen=True)
class Lines:
    """A convex piecewise-linear function ``f(B) = max_i (c0_i + c1_i B)``, ``B >= 0``.

    ``rising`` (static): every slope is non-negative, so ``{B >= 0: f(B) <= T}`` is ``[0, B*]``; a branch that holds a
    falling line (:class:`ConcaveLines`) has an interval there (:func:`largest_within`).
    """

    intercepts: tuple
    slopes: tuple
    rising: bool = True

    def __call__(self, batch):
        return _envelope(self.intercepts, self.slopes, batch, maximum)

    def shifted(self, intercept=0.0, slope=0.0, rising: bool = True) -> Lines:
        """``f(B) + intercept + slope B``.

        Parameters
        ----------
        intercept : float or ndarray [s]
            Added to every intercept.
        slope : float or ndarray [s/token]
            Added to every slope.
        rising : bool
            Whether the added slope is non-negative (static).

        Returns
        -------
        Lines
            The shifted lines.
        """
        return Lines(tuple(_add(c0, intercept) for c0 in self.intercepts), tuple(_add(c1, slope) for c1 in self.slopes),
                     self.rising and rising)


@dataclass(frozen=True)
class ConcaveLines:
    """A concave piecewise-linear function ``g(B) = min_i (c0_i + c1_i B)``, ``B >= 0`` (the prefill riding in a
    cycle, :func:`tco.core.serving.cycles.interference_lines`): added to the convex cycle lines line by line, it makes one
    branch per line, and branches combine by their minimum (:func:`branch_min`, :func:`branch_max`). ``rising``
    (static): whether each line's slope is non-negative (default: all)."""

    intercepts: tuple
    slopes: tuple
    rising: tuple | None = None

    def branches(self, lines: Lines) -> list[Lines]:
        """``f + g`` as one branch per line of ``g``: ``f(B) + c0_i + c1_i B`` for each ``i``.

        Parameters
        ----------
        lines : Lines
            The convex ``f`` [s].

        Returns
        -------
        list of Lines
            One branch per line of ``g``; ``min`` over them is ``f + g``.
        """
        rising = self.rising or (True,) * len(self.slopes)
        return [lines.shifted(c0, c1, up) for c0, c1, up in zip(self.intercepts, self.slopes, rising, strict=True)]

    def __call__(self, batch):
        return _envelope(self.intercepts, self.slopes, batch, minimum)


def _envelope(intercepts: tuple, slopes: tuple, batch, combine: Callable):
    """``combine`` (the maximum of :class:`Lines`, the minimum of :class:`ConcaveLines`) over the lines
    ``c0_i + c1_i B`` at ``B = batch`` [the lines' unit], taken line by line in order."""
    value = None
    for c0, c1 in zip(intercepts, slopes, strict=True):
        line = _add(c0, _scale(c1, batch))
        value = line if value is None else combine(value, line)
    return value


def _pairs(a: Lines, b: Lines, keep) -> Lines:
    """Lines of ``a (+) b = max(a, b) + (1 - o) min(a, b)`` for convex ``a``, ``b`` (``keep = 1 - o``).

    ``x (+) y = max(x + (1-o) y, y + (1-o) x)`` is increasing in both, so with ``a = max_i a_i``
    and ``b = max_j b_j`` it is ``max_{i,j} max(a_i + (1-o) b_j, b_j + (1-o) a_i)``.
    """
    c0, c1 = [], []
    kept_b = [(_scale(keep, b0), _scale(keep, b1)) for b0, b1 in zip(b.intercepts, b.slopes, strict=True)]  # once per b_j
    for a0, a1 in zip(a.intercepts, a.slopes, strict=True):
        kept_a0, kept_a1 = _scale(keep, a0), _scale(keep, a1)
        for (b0, b1), (kept_b0, kept_b1) in zip(zip(b.intercepts, b.slopes, strict=True), kept_b, strict=True):
            c0 += [_add(a0, kept_b0), _add(b0, kept_a0)]
            c1 += [_add(a1, kept_b1), _add(b1, kept_a1)]
    return Lines(tuple(c0), tuple(c1))


def tier_time_lines(bytes_fixed, bytes_per_token, tier_capacity_bytes: Sequence, tier_bandwidth_bytes_per_s: Sequence,
                    offset_s=0.0) -> Lines:
    """Lines of ``t_mem(y0 + y1 B) - offset`` with bytes placed fastest tier first.

    ``t_mem`` is convex piecewise linear when the tiers come by falling bandwidth, so it
    is the maximum of its segments' extended lines
    ``T_{i-1} + (y - C_{i-1}) / bw_i`` (``C``, ``T``: capacity and read time of the faster
    tiers).

    Parameters
    ----------
    bytes_fixed, bytes_per_token : float or ndarray [B, B/token]
        The bytes read ``y0 + y1 B``: fixed, and per token of the batch ``B``.
    tier_capacity_bytes, tier_bandwidth_bytes_per_s : Sequence [B, B/s]
        Capacity and bandwidth of each memory tier, ordered by falling bandwidth.
    offset_s : float or ndarray [s]
        Time subtracted from every line.

    Returns
    -------
    Lines
        Intercepts [s] and slopes [s/token], one per tier.
    """
    c0, c1 = [], []
    cumulative_bytes, cumulative_s = 0.0, 0.0
    for capacity, bandwidth in zip(tier_capacity_bytes, tier_bandwidth_bytes_per_s, strict=True):
        c0.append(cumulative_s + (bytes_fixed - cumulative_bytes) / bandwidth - offset_s)
        c1.append(bytes_per_token / bandwidth)
        cumulative_bytes = cumulative_bytes + capacity
        cumulative_s = cumulative_s + capacity / bandwidth
    return Lines(tuple(c0), tuple(c1))


def largest_within(lines: Lines, target, upper=np.inf):
    """Largest ``B >= 0`` with ``f(B) <= target``; negative when ``f(0) > target``.

    For convex ``f = max_i`` lines, ``f(B) <= T`` iff every line is, so
    ``B = min_i (T - c0_i) / c1_i``. Every line of a decode cycle rises with the batch (each
    sequence reads its KV cache), so the slopes are positive; at the domain's corner where one is
    zero (no KV bytes and no attention FLOPs per token) the flat line gives ``+inf`` (it never
    limits) or ``-inf`` (it is over the target at any batch), without numpy's divide warning.
    A branch with a falling line (not ``rising``: the budget-filled bound of a micro-batch pipeline's
    prefill, :func:`tco.core.serving.cycles.interference_lines`) meets the target on an interval: a line of
    negative slope bounds ``B`` from below, so the largest batch is ``min(upper, min over rising lines)``
    where that is at least ``max over falling lines``, else ``-inf`` (callers cap the result at ``upper``).

    Parameters
    ----------
    lines : Lines
        Intercepts [s] and slopes [s/token] of ``f``.
    target : float or ndarray [s]
        Time allowed ``T``.
    upper : float or ndarray [tokens]
        The largest batch the caller admits (read only by a branch that is not ``rising``).

    Returns
    -------
    ndarray [tokens]
        The largest batch.
    """
    best = None
    if lines.rising:
        with np.errstate(divide="ignore"):
            for c0, c1 in zip(lines.intercepts, lines.slopes, strict=True):
                line = (target - c0) / c1
                best = line if best is None else minimum(best, line)
        return best
    high, low = upper, -np.inf
    with np.errstate(divide="ignore", invalid="ignore"):
        for c0, c1 in zip(lines.intercepts, lines.slopes, strict=True):
            bound = (target - c0) / c1
            flat_over = (c1 == 0) & (c0 > target)
            high = np.minimum(high, np.where(c1 > 0, bound, np.where(flat_over, -np.inf, np.inf)))
            low = np.maximum(low, np.where(c1 < 0, bound, -np.inf))
    return np.where(low <= high, high, -np.inf)


def least_fixed_point(lines: Lines, gain):
    """Least ``B`` with ``B = g f(B)``, ``g >= 0``; very large when there is none.

    For a single line ``B = g (c0 + c1 B)`` gives ``B = g c0 / (1 - g c1)`` (none if
    ``g c1 >= 1``: the replica cannot keep up). For ``f = max_i`` lines the least fixed
    point is the largest of the lines' fixed points: at that ``B`` every other line lies
    below the diagonal. Used with ``g = lambda O`` (Little's law: occupancy = arrival rate
    x time in decode); callers cap the result at the slot cap.

    Parameters
    ----------
    lines : Lines
        Intercepts [s] and slopes [s/token] of ``f``.
    gain : float or ndarray [tokens/s]
        ``g``, the rate that turns time into occupancy (``lambda O``).

    Returns
    -------
    ndarray [tokens]
        The least fixed point (the mean decode batch).

    References
    ----------
    [little-1961] occupancy = arrival rate x time in system.
    """
    out = 0.0
    for c0, c1 in zip(lines.intercepts, lines.slopes, strict=True):
        out = maximum(out, gain * c0 / maximum(1.0 - gain * c1, 1e-12))
    return out


@dataclass(frozen=True)
class CycleModel:
    """Everything a replica's cycle time depends on, per replica (arrays broadcast over draws).

    Bytes and FLOPs are per replica; ``tier_capacity_bytes``/``tier_bandwidth_bytes_per_s``
    are the replica's usable capacity and achievable bandwidth per memory tier.
    """

    pipeline: int
    weight_bytes: object          # stored weights W [B]
    read_fixed_bytes: object      # weight bytes read = fixed + per_token x (tokens per micro-batch); dense: the active weights
    read_per_token_bytes: object  # (0 for a dense model: then only the dense branch exists)
    moe: bool
    weight_flops_per_token: object
    decode_kv_bytes_per_token: object
    decode_attention_flops_per_token: object
    prefill_kv_bytes_per_token: object
    prefill_attention_flops_per_token: object
    flops_per_s: object
    tier_capacity_bytes: tuple
    tier_bandwidth_bytes_per_s: tuple
    sync_fixed_s: object
    sync_per_token_s: object
    memory_compute_overlap: object
    phase_overlap: object
    comm_overlap: object
    #: ``1 - o`` of each overlap when the caller computed it once for many cycle models (None: computed here)
    keeps: tuple | None = None
    #: micro-batches per stage that each read the weights (2: two-batch overlap) [-]
    micro_batches: int = 1
    #: attention ranks that each schedule their own sequences and prompt chunks (wide expert parallelism) [-]
    data_parallel: int = 1
    #: two-batch overlap: the expert all-to-alls' fixed time [s] and time per token [s/token], overlapped with the
    #: phases by ``1 - expert_keep`` (None: no such overlap; a replica without it carries them in ``sync_*``)
    expert_fixed_s: object = 0.0
    expert_per_token_s: object = 0.0
    expert_keep: object = None
    #: the collectives' bandwidth part per prompt token [s/token] (None: ``sync_per_token_s``, as a decode token's)
    sync_per_prompt_token_s: object = None
    #: speculative decoding (:class:`tco.core.serving.speculation.Speculation`): token passes per decode sequence
    #: through the weight GEMMs, routed experts and collectives, ``k + 1 + k f`` (1: one token per step) [-]
    token_passes: object = 1.0
    #: and reads of the weights per cycle, ``1 + k f`` (1: one read) [-]
    weight_reads: object = 1.0

    @property
    def weight_passes(self):
        """Times a cycle reads the weights, ``p x micro_batches`` [-]."""
        return times(self.micro_batches, self.pipeline)

    @property
    def lanes(self):
        """Schedulers that take whole prompt chunks, ``p x data_parallel`` [lanes]."""
        return times(self.data_parallel, self.pipeline)

    def _keeps(self):
        """``(1 - o_mc, 1 - o_p, 1 - o_c)`` [-]: the caller's (one array pass each per pool, not per shape and call) or
        computed now."""
        if self.keeps is not None:
            return self.keeps
        return overlap_keeps(self.memory_compute_overlap, self.phase_overlap, self.comm_overlap)

    @property
    def full_read_bytes(self):
        """Weight bytes a micro-batch reads when every weight it can touch is touched [B].

        A dense model's active weights (``read_fixed_bytes``: the input-embedding table is
        indexed, not read), an MoE model's stored weights.
        """
        return self.weight_bytes if self.moe else self.read_fixed_bytes

    def weight_read_bytes(self, tokens, stages=1):
        """Weight bytes read by one micro-batch of ``tokens`` tokens.

        Parameters
        ----------
        tokens : float or ndarray [tokens]
            Tokens of the micro-batch, or of the cycle when ``stages`` splits them.
        stages : int or float or ndarray [-]
            Micro-batches the tokens are split into (pipeline stages; a dense model reads no per-token bytes).

        Returns
        -------
        ndarray [B]
            Weight bytes read (all active weights for a dense model; shared plus touched experts
            for an MoE model, at most the stored weights).
        """
        if not self.moe:
            return self.read_fixed_bytes
        sparse = self.read_fixed_bytes + self.read_per_token_bytes * maximum(tokens / stages, 1.0)
        return minimum(sparse, self.weight_bytes)

    def terms_s(self, decode_tokens, prefill_tokens):
        """The four terms of a cycle and its collectives.

        Parameters
        ----------
        decode_tokens, prefill_tokens : float or ndarray [tokens]
            Tokens in the cycle: ``B`` decode tokens, ``N_p`` prefill tokens.

        Returns
        -------
        tuple of ndarray [s]
            ``(weight memory, weight compute, KV memory, attention compute, collectives)``.

        References
        ----------
        [williams-roofline-2009] memory and compute time of each phase.
        """
        weight_memory, weight_compute, kv_memory, kv_compute, sync = self._terms(decode_tokens, prefill_tokens)
        if self.expert_keep is not None:  # the overlapped all-to-alls, whole (the bound code counts them)
            sync = sync + self.expert_comm_s(self.passed_tokens(decode_tokens, prefill_tokens))
        return weight_memory, weight_compute, kv_memory, kv_compute, sync

    def passed_tokens(self, decode_tokens, prefill_tokens):
        """Tokens a cycle puts through the weights, ``s B + N_p`` (``s = k + 1 + k f`` under speculative decoding,
        else 1).

        Parameters
        ----------
        decode_tokens, prefill_tokens : float or ndarray [tokens]
            Decode sequences ``B`` and prefill tokens ``N_p`` of the cycle.

        Returns
        -------
        float or ndarray [tokens]
            Token passes of the cycle.
        """
        return _add(times(self.token_passes, decode_tokens), prefill_tokens)

    def _terms(self, decode_tokens, prefill_tokens):
        """:meth:`terms_s` without a two-batch-overlap cycle's expert all-to-alls [s]."""
        tokens = self.passed_tokens(decode_tokens, prefill_tokens)
        caps, bws = self.tier_capacity_bytes, self.tier_bandwidth_bytes_per_s
        passes = times(self.weight_reads, self.weight_passes)
        weight_memory = times(passes, memory_read_time_s(self.weight_read_bytes(tokens, self.weight_passes), caps, bws))
        weight_compute = self.weight_flops_per_token * tokens / self.flops_per_s
        kv = _add(_scale(decode_tokens, self.decode_kv_bytes_per_token), _scale(prefill_tokens, self.prefill_kv_bytes_per_token))
        if len(caps) == 1:  # one tier: the KV cache streams at its bandwidth
            kv_memory = kv / bws[0]
        else:
            kv_memory = memory_read_time_s(self.weight_bytes + kv, caps, bws) - memory_read_time_s(self.weight_bytes, caps, bws)
        kv_compute = _add(_scale(decode_tokens, self.decode_attention_flops_per_token),
                          _scale(prefill_tokens, self.prefill_attention_flops_per_token)) / self.flops_per_s
        if self.sync_per_prompt_token_s is None:
            per_token = self.sync_per_token_s * tokens
        else:  # the decode passes at the decode tokens' figure, the prompt tokens at theirs
            per_token = _add(self.sync_per_token_s * times(self.token_passes, decode_tokens),
                             _scale(prefill_tokens, self.sync_per_prompt_token_s))
        sync = self.sync_fixed_s + self._keeps()[2] * per_token
        return weight_memory, weight_compute, kv_memory, kv_compute, sync

    def expert_comm_s(self, tokens):
        """The expert all-to-alls a two-batch-overlap cycle of ``tokens`` tokens runs beside its phases,
        ``expert_fixed_s + expert_per_token_s N`` (0 without two-batch overlap: then they are in the sync terms).

        Parameters
        ----------
        tokens : float or ndarray [tokens]
            Tokens of the cycle ``N``.

        Returns
        -------
        float or ndarray [s]
            Their time, before the overlap.
        """
        if self.expert_keep is None:
            return 0.0
        return self.expert_fixed_s + self.expert_per_token_s * tokens

    def cycle_s(self, decode_tokens, prefill_tokens):
        """Time of one cycle with ``B`` decode tokens and ``N_p`` prefill tokens (exact, not the lines).

        Parameters
        ----------
        decode_tokens : float or ndarray [tokens]
            Decode tokens ``B``.
        prefill_tokens : float or ndarray [tokens]
            Prefill tokens ``N_p``.

        Returns
        -------
        ndarray [s]
            Cycle time.
        """
        keep, phase_keep, _ = self._keeps()
        if self.expert_keep is None:
            weight_memory, weight_compute, kv_memory, kv_compute, sync = self.terms_s(decode_tokens, prefill_tokens)
            a = overlapped(weight_memory, weight_compute, None, keep)
            b = overlapped(kv_memory, kv_compute, None, keep)
            return overlapped(a, b, None, phase_keep) + sync
        # the terms without the overlapped all-to-alls, then those overlapped with the phases
        weight_memory, weight_compute, kv_memory, kv_compute, sync = self._terms(decode_tokens, prefill_tokens)
        a = overlapped(weight_memory, weight_compute, None, keep)
        b = overlapped(kv_memory, kv_compute, None, keep)
        comm = self.expert_comm_s(self.passed_tokens(decode_tokens, prefill_tokens))
        return overlapped(overlapped(a, b, None, phase_keep), comm, None, self.expert_keep) + sync

    def bound_and_spill(self, decode_tokens, prefill_tokens):
        """What bounds a cycle and the bytes it reads from below the fastest tier.

        The bound is the largest of the memory terms, the compute terms and the collectives;
        weights are placed in the fastest tier first, the KV cache after them.

        Parameters
        ----------
        decode_tokens, prefill_tokens : float or ndarray [tokens]
            Decode tokens ``B`` and prefill tokens ``N_p`` of the cycle.

        Returns
        -------
        bound : ndarray [-]
            0 memory, 1 compute, 2 collectives.
        spilled : ndarray [B]
            Bytes read from below the fastest tier.
        """
        weight_memory, weight_compute, kv_memory, kv_compute, sync = self.terms_s(decode_tokens, prefill_tokens)
        memory, compute = weight_memory + kv_memory, weight_compute + kv_compute
        code = (compute > memory) * (compute >= sync) * 1.0 + (sync > maximum(memory, compute)) * 2.0
        tokens = self.passed_tokens(decode_tokens, prefill_tokens)
        fast = self.tier_capacity_bytes[0]
        weights = self.weight_read_bytes(tokens, self.weight_passes)
        kv = decode_tokens * self.decode_kv_bytes_per_token + prefill_tokens * self.prefill_kv_bytes_per_token
        # weights sit in the fastest tier first (re-read by each of p micro-batches and draft passes), the KV cache
        # after them
        reads = times(self.weight_reads, self.weight_passes)
        spilled = times(reads, maximum(weights - fast, 0.0)) + maximum(kv - maximum(fast - weights, 0.0), 0.0)
        if len(self.tier_capacity_bytes) == 1:  # one tier: nothing lives below it
            spilled = 0.0 * spilled
        return code, spilled

    def decode_lines(self) -> list[Lines]:
        """Lines of the decode-only cycle ``t_d(B)``, one :class:`Lines` per weight-read branch.

        ``t_d`` is the minimum over the branches (dense models have one).

        Returns
        -------
        list of Lines
            Intercepts [s] and slopes [s/token] per branch.
        """
        caps, bws, p = self.tier_capacity_bytes, self.tier_bandwidth_bytes_per_s, self.weight_passes
        reads, s = times(self.weight_reads, p), self.token_passes
        keep, phase_keep, comm_keep = self._keeps()
        compute = Lines((0.0,), (times(s, self.weight_flops_per_token) / self.flops_per_s,))
        base_s = memory_read_time_s(self.weight_bytes, caps, bws)
        kv_compute_slope = self.decode_attention_flops_per_token / self.flops_per_s
        if len(caps) == 1:  # both attention terms pass through the origin: one line
            attention = Lines((0.0,), (overlapped(self.decode_kv_bytes_per_token / bws[0], kv_compute_slope, None, keep),))
        else:
            kv_memory = tier_time_lines(self.weight_bytes, self.decode_kv_bytes_per_token, caps, bws, base_s)
            attention = _phase(kv_memory, kv_compute_slope, keep)
        sync = (times(s, comm_keep * self.sync_per_token_s), self.sync_fixed_s)
        branches = [Lines((times(reads, memory_read_time_s(self.full_read_bytes, caps, bws)),), (0.0,))]
        if self.moe:
            sparse = tier_time_lines(self.read_fixed_bytes, times(s, self.read_per_token_bytes) / p, caps, bws)
            branches.append(Lines(tuple(reads * c for c in sparse.intercepts), tuple(reads * c for c in sparse.slopes)))
        out = []
        comm = None if self.expert_keep is None else Lines((self.expert_fixed_s,), (times(s, self.expert_per_token_s),))
        for weight_memory in branches:
            weights = _phase(weight_memory, compute.slopes[0], keep)
            phases = _pairs(weights, attention, phase_keep)
            if comm is not None:  # two-batch overlap: the all-to-alls under the phases, x (+) comm
                phases = _pairs(phases, comm, self.expert_keep)
            out.append(phases.shifted(sync[1], sync[0]))
        return out


def _phase(memory: Lines, compute_slope, keep) -> Lines:
    """Lines of ``memory (+) compute`` with ``compute = s B``: ``max_i max(m_i + (1-o) s B, s B + (1-o) m_i)``
    (``keep = 1 - o``)."""
    c0, c1 = [], []
    for m0, m1 in zip(memory.intercepts, memory.slopes, strict=True):
        c0 += [m0, _scale(keep, m0)]
        c1 += [_add(m1, _scale(keep, compute_slope)), _add(compute_slope, _scale(keep, m1))]
    return Lines(tuple(c0), tuple(c1))


def branch_max(values: Sequence):
    """Maximum over the weight-read branches.

    Parameters
    ----------
    values : Sequence [tokens]
        One value per branch (a dense model has one): the largest batch within a target.

    Returns
    -------
    ndarray [tokens]
        The element-wise maximum.
    """
    out = values[0]
    for value in values[1:]:
        out = maximum(out, value)
    return out


def branch_min(values: Sequence):
    """Minimum over the weight-read branches (one value per branch; a dense model has one).

    Parameters
    ----------
    values : Sequence [s or tokens]
        One value per branch: cycle times [s] or batches [tokens].

    Returns
    -------
    ndarray [s or tokens]
        The element-wise minimum, in the unit of ``values``.
    """
    out = values[0]
    for value in values[1:]:
        out = minimum(out, value)
    return out
