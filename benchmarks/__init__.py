"""Measurements that are run by hand; they print figures and assert nothing."""
