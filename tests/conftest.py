pytest_plugins = ["tests.etcd_fixtures"]
