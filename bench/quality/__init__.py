"""Context quality: packs scored against the change that answered each task (SWE-bench Lite, the
commit dev set), and the learned ranking trained and checked on the commit training set."""
