"""AWS adapters of the ports: S3, DynamoDB, OpenSearch Serverless, and Lambda event models.

Adapters receive boto3 (or opensearch-py) clients; nothing here creates a client at import time.
"""
