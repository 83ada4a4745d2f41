"""Fleet dynamics: stranded capacity, coordination, Pareto frontiers, routing, siting."""
