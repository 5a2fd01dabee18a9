"""IAM in the local cloud: each deployed role's requests authorized against the synthesized template's
policies (enforcement.py), as AWS evaluates them (policy.py), by the IAM action of each request
(actions.py)."""
