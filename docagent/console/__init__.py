"""``docagent console``: a web page on 127.0.0.1 where operators watch and steer jobs and reviewers check
documents beside their extracted fields (docs/console.md). It reads only through the operator's reader of a
job's records and acts only through the operator's commands' functions."""
