"""``tco app``: serve the Dash app (Compare, Assumptions, Break-even, Uncertainty, Lifecycle, Fleet)."""

from __future__ import annotations

from tco.foundation.errors import InputError


def add_parser(sub):
    parser = sub.add_parser("app", help="serve the interactive app in a browser", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1, this machine only)")
    parser.add_argument("--port", type=int, default=8050, help="port (default: 8050)")
    parser.add_argument("--scenario", default=None, metavar="FILE",
                        help="a scenario YAML file to open first (the bundled scenarios stay available)")
    return parser


def run(args) -> int:
    if not 0 < args.port < 65536:
        raise InputError.one("--port", args.port, "must be an integer in [1, 65535]")
    from tco_app import create_app  # lazy: the other subcommands never import Dash

    server = create_app(args.scenario)
    print(f"tco app: serving on http://{args.host}:{args.port}/ (Ctrl+C to stop)")
    server.run(host=args.host, port=args.port, debug=False)
    return 0
