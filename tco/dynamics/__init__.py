"""Fleet dynamics analyses (docs/fleet-dynamics.md): KV wall, stranded capacity, coordination, Pareto, tree, routing, roadmap."""
