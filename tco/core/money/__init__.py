"""Money and time: discounting, the plan of purchases and flows, the roadmap, NRE and process nodes,
workload half-life, cash flows."""
