#!/usr/bin/env python3
"""The API simulator's own test suite (tests/apisim/test_apisim.py), run with the integration tests."""

import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
suite = os.path.join(here, "..", "..", "apisim", "test_apisim.py")
os.execv(sys.executable, [sys.executable, suite] + sys.argv[1:])
