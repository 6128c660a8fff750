"""The dialect compliance suite: every test of `sqlalchemy.testing.suite`, unchanged."""

from sqlalchemy.testing.suite import *  # noqa: F403
