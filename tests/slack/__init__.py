"""Scenario tests of the Slack surface: signed requests over real HTTP, a fake Slack Web API."""
