"""What happens to replicas when a node goes wrong or away: health, node loss, drain, and address
pools that shrank."""
