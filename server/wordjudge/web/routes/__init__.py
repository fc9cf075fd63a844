"""The JSON API's routes under ``/api/``, one module per part: thin glue over the layers below."""
