"""What a person reads: tables, sentences, figures and their style, built on the analysis."""
