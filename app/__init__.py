"""The Dash app of tco: ``create_app()`` builds it; ``tco app`` serves it."""

from .main import create_app

__all__ = ["create_app"]
