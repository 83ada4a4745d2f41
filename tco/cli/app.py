"""``tco app``: serve the Dash app (Compare, Assumptions, Break-even, Uncertainty, Lifecycle, Fleet)."""

from __future__ import annotations

import re
import sys

from tco.foundation.errors import InputError


def add_parser(sub):
    parser = sub.add_parser("app", help="serve the interactive app in a browser", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1, this machine only)")
    parser.add_argument("--port", type=int, default=8050, help="port (default: 8050)")
    parser.add_argument("--scenario", default=None, metavar="FILE",
                        help="a scenario YAML file to open first (the bundled scenarios stay available)")
    parser.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                        help="a Host name the server answers besides 127.0.0.1 and localhost (repeatable): the name or "
                             "address users reach it by when it is served on a network (--host 0.0.0.0)")
    return parser


#: a host name or an IP address (v4, or v6 without brackets)
_HOST = re.compile(r"^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.?)+$|^[0-9A-Fa-f:.]+$")
#: bind addresses that are no name a browser sends
ANY_ADDRESS = ("0.0.0.0", "::", "")


def allowed_hosts(args) -> list[str]:
    """The Host names to answer: 127.0.0.1, localhost, the address bound (when it is one address) and each
    ``--allowed-host``; a wildcard is refused (it would answer a DNS-rebinding page)."""
    hosts = ["127.0.0.1", "localhost"] + ([args.host] if args.host not in ANY_ADDRESS else [])
    for name in args.allowed_host:
        if "*" in name:
            raise InputError.one("--allowed-host", name, "a wildcard would answer any page that resolves its own name to "
                                                         "this server (DNS rebinding): name each host")
        if len(name) > 253 or not _HOST.match(name):
            raise InputError.one("--allowed-host", name, "must be a host name or an IP address (no port, no scheme)")
        hosts.append(name)
    return hosts


def run(args) -> int:
    if not 0 < args.port < 65536:
        raise InputError.one("--port", args.port, "must be an integer in [1, 65535]")
    hosts = allowed_hosts(args)
    from tco_app import create_app  # lazy: the other subcommands never import Dash

    server = create_app(args.scenario, allowed_hosts=hosts)
    print(f"tco app: serving on http://{args.host}:{args.port}/ for the host names {', '.join(hosts)} (Ctrl+C to stop)")
    if args.host in ANY_ADDRESS and not args.allowed_host:
        print("tco app: served on every address but answering 127.0.0.1 and localhost only: add --allowed-host NAME "
              "for the name users reach this machine by", file=sys.stderr)
    server.run(host=args.host, port=args.port, debug=False)
    return 0
