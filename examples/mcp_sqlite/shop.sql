-- The template database of the mcp_sqlite example: a small shop.
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT NOT NULL);
CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, price REAL NOT NULL, stock INTEGER NOT NULL);
CREATE TABLE orders (
    id INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES customers(id),
    product_id INTEGER NOT NULL REFERENCES products(id),
    quantity INTEGER NOT NULL,
    status TEXT NOT NULL DEFAULT 'open'
);
INSERT INTO customers VALUES (1, 'Ada Lovelace', 'London'), (2, 'Alan Turing', 'Manchester'), (3, 'Grace Hopper', 'New York');
INSERT INTO products VALUES (1, 'notebook', 3.5, 40), (2, 'pen', 1.25, 200), (3, 'stapler', 12.0, 5), (4, 'lamp', 24.9, 0);
INSERT INTO orders VALUES (1, 1, 1, 2, 'open'), (2, 2, 3, 1, 'shipped'), (3, 3, 2, 10, 'open');
