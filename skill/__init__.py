"""Variant skill reports: which Agurk rule variant rewards skill (``agurk skill-report``)."""
