from tco.cli import run

run()
