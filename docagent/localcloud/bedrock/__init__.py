"""The local Bedrock: the Converse API answered from labels or recorded replies, and document text."""
