"""Experiments: whole games, series, benchmarks and corpus recording, built on the planners.

Each module is a library of keyword-only functions that return results (and write result files);
the `nlmcs` commands are thin wrappers that parse options and print.
"""
