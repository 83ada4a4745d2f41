"""Named what-if edits of the bundled scenarios that several test modules share."""

#: custom-asic where its ASIC can win: the ASIC at the catalog's high achievable share of peak FLOP/s (0.75; the
#: serving model finds its decode compute-bound) and Rubin slipping past the horizon (released 2032), so the baseline
#: keeps its B200s (B300 costs more per token). At base values the baseline moves from B200 to Rubin in year 1 and
#: beats the ASIC at any volume; here it wins from ~375,000 units sold to others at the 3-year half-life, ~76,000 at 6.
ASIC_CAN_WIN = {"devices.custom-decode-asic.compute_efficiency": 0.75, "roadmap.rubin.release_year": 2032.0}
