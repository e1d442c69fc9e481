"""Maps the import name ``plexnet`` onto the folder ``core/`` (ARCHITECTURE.md).

pyproject's ``packages.find`` cannot rename a folder, so the subpackages are listed here.
"""
from setuptools import find_packages, setup

setup(packages=["plexnet"] + ["plexnet." + p for p in find_packages("core")])
