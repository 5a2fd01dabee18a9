"""Thin Lambda entry points: wire Powertools, validate the event, call one logic function."""
