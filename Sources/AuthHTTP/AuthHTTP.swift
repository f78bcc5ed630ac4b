// AuthHTTP module.
