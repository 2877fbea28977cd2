"""The written specification as package data: prose rules, data tables, scenario vectors."""
