"""The rule catalogue: every break family, kernel rule and setting breakscan knows, and how a
Dynamo break is matched to one. Pure data and matching; the lowest folder (imports nothing else
of breakscan), so every stage can name a rule."""
