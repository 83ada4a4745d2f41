"""Inputs, validated at the edge: YAML files, the catalog of sourced defaults, scenario files and their
resolution into named parameters, the fleet analyses' settings, the bibliography."""
