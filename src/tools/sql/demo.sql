-- The demo database riskgate creates in the workspace when no database is configured, so
-- the quick start has something to ask about. Trusted SQL, run once, in one transaction.

CREATE TABLE customers (
    id         INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    email      TEXT NOT NULL UNIQUE,
    city       TEXT NOT NULL,
    signed_up  TEXT             -- ISO date; NULL while the signup is unconfirmed
);

CREATE TABLE products (
    id        INTEGER PRIMARY KEY,
    name      TEXT NOT NULL,
    category  TEXT NOT NULL,
    price     REAL NOT NULL,    -- in EUR
    stock     INTEGER NOT NULL
);

CREATE TABLE orders (
    id           INTEGER PRIMARY KEY,
    customer_id  INTEGER NOT NULL REFERENCES customers (id),
    product_id   INTEGER NOT NULL REFERENCES products (id),
    quantity     INTEGER NOT NULL CHECK (quantity > 0),
    ordered_at   TEXT NOT NULL,    -- ISO date and time, UTC
    status       TEXT NOT NULL CHECK (status IN ('pending', 'shipped', 'delivered', 'cancelled'))
);

CREATE INDEX orders_by_customer ON orders (customer_id);

INSERT INTO customers (id, name, email, city, signed_up) VALUES
    (1, 'Ada Lovelace', 'ada@example.com', 'London', '2023-01-14'),
    (2, 'Grace Hopper', 'grace@example.com', 'New York', '2023-02-03'),
    (3, 'Alan Turing', 'alan@example.com', 'Manchester', '2023-02-27'),
    (4, 'Katherine Johnson', 'katherine@example.com', 'Hampton', '2023-03-19'),
    (5, 'Edsger Dijkstra', 'edsger@example.com', 'Rotterdam', '2023-04-08'),
    (6, 'Barbara Liskov', 'barbara@example.com', 'Boston', '2023-05-22'),
    (7, 'Donald Knuth', 'donald@example.com', 'Stanford', '2023-06-30'),
    (8, 'Margaret Hamilton', 'margaret@example.com', 'Boston', '2023-08-11'),
    (9, 'Linus Torvalds', 'linus@example.com', 'Portland', '2023-09-05'),
    (10, 'Frances Allen', 'frances@example.com', 'New York', '2023-10-17'),
    (11, 'Ken Thompson', 'ken@example.com', 'Berkeley', '2023-11-29'),
    (12, 'Radia Perlman', 'radia@example.com', 'Seattle', NULL);

INSERT INTO products (id, name, category, price, stock) VALUES
    (1, 'Mechanical keyboard', 'Peripherals', 89.90, 40),
    (2, 'Wireless mouse', 'Peripherals', 24.50, 120),
    (3, '27-inch monitor', 'Displays', 279.00, 15),
    (4, 'USB-C hub', 'Accessories', 39.99, 75),
    (5, 'Laptop stand', 'Accessories', 45.00, 30),
    (6, 'Noise-cancelling headphones', 'Audio', 199.00, 22),
    (7, 'Webcam 1080p', 'Peripherals', 59.00, 0),
    (8, 'Desk lamp', 'Office', 32.75, 55),
    (9, 'Standing desk', 'Office', 499.00, 6),
    (10, 'Ergonomic chair', 'Office', 349.50, 9);

INSERT INTO orders (id, customer_id, product_id, quantity, ordered_at, status) VALUES
    (1, 6, 3, 2, '2024-01-21 08:04:00', 'pending'),
    (2, 2, 6, 2, '2024-01-02 16:13:00', 'delivered'),
    (3, 2, 7, 2, '2024-01-03 11:05:00', 'pending'),
    (4, 7, 1, 5, '2024-02-19 09:14:00', 'cancelled'),
    (5, 1, 10, 2, '2024-02-13 08:14:00', 'delivered'),
    (6, 9, 3, 1, '2024-02-14 10:34:00', 'delivered'),
    (7, 10, 5, 2, '2024-03-27 18:11:00', 'delivered'),
    (8, 10, 10, 3, '2024-03-07 13:06:00', 'pending'),
    (9, 2, 10, 1, '2024-03-20 11:31:00', 'pending'),
    (10, 7, 6, 2, '2024-04-19 15:23:00', 'delivered'),
    (11, 4, 3, 3, '2024-04-25 11:05:00', 'cancelled'),
    (12, 5, 9, 2, '2024-04-11 19:28:00', 'delivered'),
    (13, 10, 2, 1, '2024-05-17 14:10:00', 'delivered'),
    (14, 3, 8, 2, '2024-05-02 18:04:00', 'pending'),
    (15, 10, 6, 1, '2024-05-23 13:38:00', 'shipped'),
    (16, 10, 8, 1, '2024-06-27 09:17:00', 'shipped'),
    (17, 11, 2, 1, '2024-06-24 19:19:00', 'cancelled'),
    (18, 11, 8, 1, '2024-06-23 14:56:00', 'delivered'),
    (19, 1, 8, 1, '2024-07-06 17:07:00', 'shipped'),
    (20, 1, 4, 5, '2024-07-10 10:47:00', 'delivered'),
    (21, 7, 7, 5, '2024-07-16 09:10:00', 'shipped'),
    (22, 7, 9, 1, '2024-08-05 21:27:00', 'pending'),
    (23, 5, 7, 1, '2024-08-22 14:14:00', 'delivered'),
    (24, 2, 3, 1, '2024-08-08 18:14:00', 'delivered'),
    (25, 8, 10, 1, '2024-09-09 12:00:00', 'delivered'),
    (26, 7, 9, 1, '2024-09-20 17:20:00', 'delivered'),
    (27, 9, 10, 3, '2024-09-22 19:03:00', 'shipped'),
    (28, 11, 9, 2, '2024-10-13 14:25:00', 'delivered'),
    (29, 8, 7, 1, '2024-10-07 09:13:00', 'shipped'),
    (30, 3, 2, 1, '2024-10-20 08:06:00', 'delivered'),
    (31, 10, 3, 2, '2024-11-04 13:39:00', 'pending'),
    (32, 2, 4, 2, '2024-11-13 10:40:00', 'shipped'),
    (33, 6, 10, 1, '2024-11-16 09:07:00', 'shipped'),
    (34, 8, 8, 2, '2024-12-10 09:09:00', 'pending'),
    (35, 6, 5, 2, '2024-12-27 19:10:00', 'pending'),
    (36, 4, 9, 1, '2024-12-05 19:34:00', 'pending');
