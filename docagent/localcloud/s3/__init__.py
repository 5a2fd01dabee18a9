"""S3 as AWS answers it where moto does not: listings by prefix, URL-encoded version listings."""
