"""Typed records at RecallFlow's boundaries and the error tree. Imports nothing of ours."""
