"""A cited-answer assistant over ML-systems concept pages and paper abstracts."""
