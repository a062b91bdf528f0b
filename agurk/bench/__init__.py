"""Throughput benchmarks behind ``agurk bench``, each beside a reference measured in the same run."""
