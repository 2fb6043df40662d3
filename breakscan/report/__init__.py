"""Reporters: each renders a finished ScanResult and never runs a model."""
