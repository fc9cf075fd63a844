"""The model: records, challenge rules, input rules and who may do what."""
