"""Training runs: the training step, goodput after failures, whole-run evaluation, second life."""
