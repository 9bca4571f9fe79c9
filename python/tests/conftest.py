"""pytest setup for the package's tests: cases.py and compare.py import as plain modules."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))


def pytest_configure(config):
    # torch 1.13 marks scatter_reduce as beta; the comparison does not depend on that.
    config.addinivalue_line("filterwarnings", "ignore:scatter_reduce:UserWarning")
