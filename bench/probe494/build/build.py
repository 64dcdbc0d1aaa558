#!/usr/bin/env python3
"""Regenerate this probe's manifest.json and README table from build/labels.py.

  python3 build/build.py            # writes manifest.json and rewrites the table in README.md
  python3 build/build.py --check    # only validates, writes nothing

The builder is shared: bench/probe_build.py.
"""
import os
import runpy
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.argv[1:1] = ["--probe", os.path.dirname(HERE)]
sys.dont_write_bytecode = True
runpy.run_path(os.path.join(HERE, "..", "..", "probe_build.py"), run_name="__main__")
