"""`nous eval`: retrieval quality on LoCoMo and BEIR SciFact, with the dense-only and BM25-only
baselines run in the same store (design §9)."""
